"""citebot: answers questions from your own documents and cites the chunks it used.

The package reads top-down as the pipeline runs:

    index/        documents -> chunks -> a SearchIndex (plain files on this machine)
    search/       analyzer + BM25, embedding models, fusion, the retriever, follow-up queries
    answer/       context selection, prompts, the LLM client, citations, the offline answerer
    engine.py     the one place the pipeline is assembled
    chat/         the terminal chat on top of the engine
    measurement/  evaluation and benchmarks; nothing in the product imports it
"""

__version__ = "0.3.0"
