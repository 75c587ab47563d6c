"""ConflictLens library: data model, retrieval, model layer and the five conflict-handling methods.

Importing the package sets the offline-safety environment before any heavy dependency is imported:
litellm must not fetch its cost map and Hugging Face libraries must never try the hub.
"""

import os

#: Set (unless already set) in every process that imports the package; the Ray engine hands them to its workers.
OFFLINE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "ANONYMIZED_TELEMETRY": "False",
    "TOKENIZERS_PARALLELISM": "false",
    # Ray (the evaluation's cluster engine) would otherwise report usage statistics
    "RAY_USAGE_STATS_ENABLED": "0",
    # torch threads spin while waiting by default; on a shared 2-core machine that collapses throughput
    "OMP_WAIT_POLICY": "PASSIVE",
}
for _key, _value in OFFLINE_ENV.items():
    os.environ.setdefault(_key, _value)
