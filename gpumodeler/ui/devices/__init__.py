"""Device sharing in the app: export devices to a file, import a colleague's file with a
field-by-field report and a choice per conflict (the same operations and rules as the CLI)."""
