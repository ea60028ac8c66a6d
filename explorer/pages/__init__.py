"""A whole report (or a ``compare_modes`` result) as one page: the static HTML page or the notebook's Explorer widget; ``html``, ``text`` and ``save_html`` by what the report is."""
