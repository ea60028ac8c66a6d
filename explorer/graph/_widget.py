"""The notebook's graph view: an anywidget whose ES module is the bundled component."""

from __future__ import annotations

import anywidget
import traitlets

from ..base._types import GraphBlock
from ._data import BUNDLE, block_json


class GraphWidget(anywidget.AnyWidget):
    """One graph; ``data`` is its payload as JSON (explorer/graph/_data.py)."""

    _esm = BUNDLE
    data = traitlets.Unicode("").tag(sync=True)

    def __init__(self, block: GraphBlock, **kwargs):
        super().__init__(
            data=block_json(block),
            **kwargs,
        )
