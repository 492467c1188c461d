"""From a question to ranked chunks: analyzer + BM25, dense models, fusion, rerank."""
