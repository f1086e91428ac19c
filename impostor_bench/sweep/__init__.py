"""Sweeps: a YAML config (``config``) -> a plan of experiments (``plan``) -> one Inspect
eval_set with MLflow tracking (``run``).  The names most callers need are re-exported here."""

from impostor_bench.sweep.config import (GAME_FIELDS, MANIFEST, Concurrency, Retries, SweepConfig, Tracking, config_hash,
                                   game_fields, load_config, word_pairs_path)
from impostor_bench.sweep.plan import Experiment, Plan, experiments, parse_shard, plan, plan_table, resolve_models, task_spec

__all__ = ["GAME_FIELDS", "MANIFEST", "Concurrency", "Experiment", "Plan", "Retries", "SweepConfig", "Tracking",
           "config_hash", "experiments", "game_fields", "load_config", "parse_shard", "plan", "plan_table",
           "resolve_models", "task_spec", "word_pairs_path"]
