terraform {
  required_version = ">= 1.11"
  required_providers {
    qtail = {
      source  = "qtail/qtail"
      version = "~> 0.1"
    }
  }
}
