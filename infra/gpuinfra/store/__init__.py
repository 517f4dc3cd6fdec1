"""Content-addressed storage on disk, shared by the stages that keep work across processes (preflight's compiled
definitions, the policy ledger, the access flows' peer graphs, the review's base previews)."""
