"""PT2 Explorer's views over a recorded report: for now the terminal summary and the CLI
(``pt2-explorer``, ``python -m explorer``)."""

from explorer._summary import print_summary, summary_text

__all__ = ["print_summary", "summary_text"]
