"""torch.distributed.elastic: what torchrun is made of (the local agent, worker processes, their
error reports). Only fixed-size jobs are supported: no membership changes, no etcd."""
