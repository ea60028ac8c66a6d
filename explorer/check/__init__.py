"""The CI gate's rules over a report: ``pt2-explorer check`` and the pytest plugin (``explorer/_pytestplugin.py``) apply them."""
