"""Google's planner: the cloud-neutral serving planner (memory, roofline, cold start, capacity, failover) run on
Google's machine types, and quota needs in Google's units."""
