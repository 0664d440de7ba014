import {
  to = qtail_exposed_service.billing_us_east_1
  id = "3fa85f64-5717-4562-b3fc-2c963f66afa6/7d2c9e41-0b6a-4f3e-9a55-1c8e2b4d6f90"
}
