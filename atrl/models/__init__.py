"""Model files shipped inside the package: the default policy's LoRA adapter
(`smollm2_135m_triton/`, see docs/default-adapter.md)."""
