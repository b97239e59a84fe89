"""The OpenAI-compatible LLM client: chat messages in, a reply and its audit record out
(client.py), bounded in time and size (bounds.py), capped cluster-wide (limit.py), with
structured-output forms (forms.py, form_choice.py), strict schemas (schema.py) and
streamed replies (stream_choice.py, stream_reader.py)."""
