"""The PySide6 desktop application: a thin shell over core and db."""
