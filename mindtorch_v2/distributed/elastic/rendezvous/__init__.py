"""torch.distributed.elastic.rendezvous: the agents' rendezvous (static and c10d, fixed size); see
elastic/agent/server/local_elastic_agent.py."""
