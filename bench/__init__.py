"""`make bench`: Chordal's latency, overhead, throughput, scaling and token figures,
each a ratio or comparison measured in the same run (see docs/benchmarks.md)."""
