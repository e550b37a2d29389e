"""The smallest plan `privcausal.method.run_release` takes, for tests of the runner: `from plans import OnlyCost`."""
from privcausal.release import PrivacyRecord


class OnlyCost:
    "A plan that is only a cost and a privacy record."
    def __init__(self, cost): self.cost = cost
    def record(self, noise, public=()):
        return PrivacyRecord(self.cost.epsilon, self.cost.delta, 'test', noise.name, noise.is_secure, self.cost.mechanism, public)
