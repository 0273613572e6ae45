"""The platform knowledge base: markdown entries shipped in `atrl/kb/entries/`, example entries
built from the builtin suite's reference solutions, BM25 retrieval and prompt injection.

Public surface: `KnowledgeInjector` (`atrl.kb.inject`), `Retriever`, `Hit`, `default_retriever`,
`platform_scope` (`atrl.kb.retriever`), `task_query`, `verdict_query` (`atrl.kb.queries`),
`Entry`, `load_entries`, `EntryError` (`atrl.kb.entries`).
"""
