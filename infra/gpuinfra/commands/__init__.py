"""The CLI's commands as functions: arguments in, a report model out. `cli.py` only parses and renders."""
