"""Pydantic contracts: everything that crosses a queue or the run store."""

from .answer import Answer, Footnote
from .plan import (DOMAINS, OPERATIONS, ArbitrateStep, ComputeStep, ExtractStep, FilterStep,
                   GetStep, IfStep, MergeStep, Plan, SearchStep, Step, ValidateStep)
from .llm import LLMCall, ReactIteration
from .quantity import KINDS, Kind, Quantity
from .query import MODES, Mode, Query, new_query_id
from .result import Candidate, Evidence, StepResult, TextPage, TextRef
from .run import STATUSES, TERMINAL, PlanProblem, RunRecord, Status, StepDispatch
from .task import FinalizeTask, GraphStep, ReactTask, StepTask

__all__ = [
    "Answer", "ArbitrateStep", "DOMAINS", "Candidate", "LLMCall", "ReactIteration", "ComputeStep", "FilterStep", "IfStep", "MergeStep",
    "SearchStep", "ValidateStep", "Evidence", "ExtractStep", "Footnote", "GetStep",
    "KINDS", "Kind", "MODES", "Mode", "OPERATIONS", "Quantity", "Plan", "PlanProblem", "Query", "RunRecord", "Status", "Step",
    "StepDispatch", "StepResult", "StepTask", "TextPage", "TextRef", "GraphStep", "FinalizeTask", "ReactTask", "STATUSES", "TERMINAL", "new_query_id",
]
