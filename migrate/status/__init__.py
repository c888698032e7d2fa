"""``mps-migrate status``: counts of overload routes by kind, per host file and category,
the MPSGraph-backed families, and progress between two trees."""

from migrate.status.compare import Progress, compare
from migrate.status.counting import KINDS, FamilyStatus, Status, category_of, compute_status, route_kind

__all__ = ["KINDS", "FamilyStatus", "Progress", "Status", "category_of", "compare", "compute_status", "route_kind"]
