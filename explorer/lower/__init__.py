"""The view model lowered: HTML fragments, plain text, plotly charts, plain tables, the page's line table."""
