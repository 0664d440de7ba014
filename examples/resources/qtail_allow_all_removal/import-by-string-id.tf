import {
  to = qtail_allow_all_removal.this
  id = "allow_all"
}
