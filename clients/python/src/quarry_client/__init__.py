"""quarry_client: the official Python client for a Quarry analytics gateway.

Standard library only. ``QuarryClient(base_url, api_key=...)`` or
``QuarryClient(base_url, oauth=OAuthCredentials(client_id, client_secret))``.
"""
from .api_models import *  # noqa: F401,F403 (the models; ``Usage`` below stays the resource)
from . import api_models
from .client import Analytics, Keys, QuarryClient, Usage, sign_up
from .errors import (
    ConflictError,
    PriceAboveLimitError,
    ErrorDetail,
    ForbiddenError,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    NetworkError,
    NotFoundError,
    OAuthError,
    QuarryError,
    QueryTimeoutError,
    QuotaExceededError,
    RateLimitError,
    ResultTooLargeError,
    SourceUnavailableError,
    TimeoutError,
    UnauthenticatedError,
    UpstreamError,
)
from .models import ApiKey, Column, QueryMeta, QueryResult
from .oauth import OAuthCredentials
from .retry import RetryPolicy
from .webhook import Webhook, WebhookVerificationError

__version__ = "0.1.0"

__all__ = [
    "Analytics",
    "ApiKey",
    "Column",
    "ConflictError",
    "PriceAboveLimitError",
    "ErrorDetail",
    "ForbiddenError",
    "InternalError",
    "InvalidParamsError",
    "InvalidRequestError",
    "Keys",
    "NetworkError",
    "NotFoundError",
    "OAuthCredentials",
    "OAuthError",
    "QuarryClient",
    "QuarryError",
    "QueryMeta",
    "QueryResult",
    "QueryTimeoutError",
    "QuotaExceededError",
    "RateLimitError",
    "ResultTooLargeError",
    "RetryPolicy",
    "Webhook",
    "WebhookVerificationError",
    "SourceUnavailableError",
    "TimeoutError",
    "UnauthenticatedError",
    "UpstreamError",
    "Usage",
    "api_models",
    "sign_up",
]
