import {
  to = qtail_connector.homelab
  id = "5e0f8c2a-9b1d-4c3e-8f7a-6d5c4b3a2910"
}
