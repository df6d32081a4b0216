"""Environments: built-in ones run inside Rust; custom ones follow
:class:`dpbandits.envs.protocol.Environment`."""

from dpbandits.envs.protocol import Environment
from dpbandits.envs.replay import ReplayEnv
from dpbandits.envs.shariff_sheffet import ShariffSheffetEnv

__all__ = ["Environment", "ReplayEnv", "ShariffSheffetEnv"]
