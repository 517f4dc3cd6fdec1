"""Reviews of a change: two sides (base and head) read from documents or previewed, compared resource by
resource (update or replace, cost change) and finding by finding."""
