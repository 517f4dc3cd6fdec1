"""Google's preflight: each generated request judged by Google's own definitions (discovery.py)."""
