import {
  to = qtail_helm_repository.tailscale
  id = "3fa85f64-5717-4562-b3fc-2c963f66afa6/9c1f0a52-7a2b-4e3c-8d1e-2f6b5a4c3d21"
}
