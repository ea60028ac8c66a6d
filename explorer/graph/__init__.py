"""The graph view: an FX graph as compact JSON for the bundled component, in the notebook and on the page."""
