import {
  to = qtail_operator.us_east_1
  id = "7b4c1f0e-2d3a-4e5f-8a9b-0c1d2e3f4a5b"
}
