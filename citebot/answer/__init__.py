"""From ranked chunks to a cited answer: context, prompts, LLM, citations, extractive."""
