"""Models built from ism kernels: ``ism.models.llama`` (configurations,
Hugging Face checkpoints in the safetensors format, RoPE tables)."""

from . import llama  # noqa: F401
