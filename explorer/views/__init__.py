"""The views, each declared once in the registry (``VIEWS``), with their text, HTML and widget lowerings."""
