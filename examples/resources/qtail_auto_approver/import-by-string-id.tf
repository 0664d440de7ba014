import {
  to = qtail_auto_approver.us_east_1_pods
  id = "route:10.20.0.0/16"
}

import {
  to = qtail_auto_approver.exit_nodes
  id = "exitNode"
}
