"""Debugging runs: consumes a RunRecord, produces Diagnoses of its failed or empty steps.

    diagnosis.py  the Diagnosis model and the causes/fixes of simple error codes
    candidates.py a GET that chose no document: the nearest candidates and the change
    explain.py    explain(record, backend): one Diagnosis per failed or empty step
    patterns.py   why a pattern missed or ran away, and a pattern checked to work
    rows.py       an EXTRACT by row that read no cell: the nearest rows and their periods
"""

from .diagnosis import Diagnosis
from .explain import explain

__all__ = ["Diagnosis", "explain"]
