"""The lines of a TORCH_TRACE log, as torch writes them (torch/_logging/_internal.py): a
glog prefix, then the event's JSON; its payload follows on lines that each start with a tab.
compiler/read/_logfile.py reads the file with these."""

from __future__ import annotations

import re

# "V1122 08:16:07.449000 399 torch/_dynamo/utils.py:2126] {json}" (glog prefix, then JSON)
GLOG = re.compile(r"^[VIWEC]\d{4} [\d:.]+\s+\d+ [^\]]*\] ")
# The same prefix in ASCII bytes, never past the line's end: a line it matches matches GLOG,
# decoded, at the same end (the common case, read with no str made: ``_quick``).
GLOG_ASCII = re.compile(rb"[VIWEC]\d{4} [\d:.]+[ \t]+\d+ [^\]\n\x80-\xff]*\] ")
MD5 = re.compile(r"[0-9a-f]{32}")  # a payload's hash, as torch writes it ("has_payload")
NOT_TAB = re.compile(rb"\n(?!\t)")  # the end of a run of payload lines
