"""Environments: built-in ones run inside Rust; custom ones follow
:class:`dpbandits.envs.protocol.Environment`."""

from dpbandits.envs.k_armed import BernoulliBandit, GaussianBandit
from dpbandits.envs.linear_bandit import LinearBanditEnv
from dpbandits.envs.logistic import LogisticContextualEnv, d20_instance
from dpbandits.envs.losses import ChasingAdversary, LossArray, StochasticLosses, SwitchingBestExpert, UniformLosses
from dpbandits.envs.protocol import Environment
from dpbandits.envs.replay import ReplayEnv
from dpbandits.envs.shariff_sheffet import ShariffSheffetEnv

__all__ = [
    "BernoulliBandit",
    "ChasingAdversary",
    "Environment",
    "GaussianBandit",
    "LinearBanditEnv",
    "LogisticContextualEnv",
    "LossArray",
    "ReplayEnv",
    "ShariffSheffetEnv",
    "StochasticLosses",
    "SwitchingBestExpert",
    "UniformLosses",
    "d20_instance",
]
