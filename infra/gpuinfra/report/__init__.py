"""The report: a versioned model (model.py), built from the stages' results (build/), rendered per format
(render/), with the Markdown templates as package data (templates/)."""
