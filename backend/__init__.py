"""ConflictLens library: data model, retrieval, model layer and the five conflict-handling methods.

Importing the package sets the offline-safety environment before any heavy dependency is imported:
litellm must not fetch its cost map and Hugging Face libraries must never try the hub.
"""

import os

for _key, _value in {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "ANONYMIZED_TELEMETRY": "False",
    "TOKENIZERS_PARALLELISM": "false",
    # torch threads spin while waiting by default; on a shared 2-core machine that collapses throughput
    "OMP_WAIT_POLICY": "PASSIVE",
}.items():
    os.environ.setdefault(_key, _value)
