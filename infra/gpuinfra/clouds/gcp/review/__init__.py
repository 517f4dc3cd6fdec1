"""Google's part of the review: which changes replace a resource."""
