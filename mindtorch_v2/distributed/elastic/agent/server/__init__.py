"""torch.distributed.elastic.agent.server: the local agent torchrun runs on each node."""
from .local_elastic_agent import DEFAULT_ROLE, LocalElasticAgent, SignalException  # noqa: F401
