"""A query's journey, in the order it takes it: its plan is chosen and checked
(planning.py), placed on its dispatch graph (placement.py), sent step by step as inputs
arrive (dispatch.py), each step run (steps.py), and the answer rendered once every kept
step has reported (finalize.py)."""
