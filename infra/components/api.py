"""HTTP API: participant routes behind IAM auth, public webhook routes (signature-checked in code)."""

from __future__ import annotations

import json

import aws_cdk as cdk
import jsii
from aws_cdk import aws_apigateway as apigw_v1
from aws_cdk import aws_apigatewayv2 as apigw
from aws_cdk import aws_apigatewayv2_authorizers as authorizers
from aws_cdk import aws_apigatewayv2_integrations as integrations
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra import constants as c
from infra.components import acknowledge, retention

# HTTP API context variables ($context.identity.userArn is the IAM caller of admin routes).
_ACCESS_LOG_FORMAT = json.dumps(
    {
        "requestId": "$context.requestId",
        "ip": "$context.identity.sourceIp",
        "caller": "$context.identity.userArn",
        "requestTime": "$context.requestTime",
        "routeKey": "$context.routeKey",
        "status": "$context.status",
        "protocol": "$context.protocol",
        "responseLength": "$context.responseLength",
        "integrationLatency": "$context.integrationLatency",
        "integrationError": "$context.integrationErrorMessage",
    }
)


class Api(Construct):
    """``http_api`` with its ``$default`` ``stage``; ``endpoint`` has no trailing slash."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: c.Config,
        enrollment: lambda_.IFunction,
        webhook: lambda_.IFunction,
    ) -> None:
        super().__init__(scope, construct_id)
        self.http_api = apigw.HttpApi(
            self,
            "HttpApi",
            api_name=f"{config.resource_prefix}-api",
            description="PromptPipe participants API and messaging webhooks",
            # The stage below is built explicitly: the default one takes no throttling or logging.
            create_default_stage=False,
        )
        self.access_logs = logs.LogGroup(
            self,
            "AccessLogs",
            retention=retention(config.log_retention_days),
            removal_policy=cdk.RemovalPolicy.DESTROY,
        )
        self.stage = self._build_stage(config)
        self.endpoint = self.http_api.api_endpoint
        self._add_participant_routes(enrollment)
        self._add_webhook_routes(webhook, config)

    def _build_stage(self, config: c.Config) -> apigw.HttpStage:
        return apigw.HttpStage(
            self,
            "DefaultStage",
            http_api=self.http_api,
            auto_deploy=True,
            throttle=apigw.ThrottleSettings(rate_limit=config.api_rate_limit, burst_limit=config.api_burst_limit),
            access_log_settings=_AccessLogSettings(
                apigw.LogGroupLogDestination(self.access_logs),
                apigw_v1.AccessLogFormat.custom(_ACCESS_LOG_FORMAT),
            ),
        )

    def _add_participant_routes(self, enrollment: lambda_.IFunction) -> None:
        integration = integrations.HttpLambdaIntegration("Enrollment", enrollment)
        authorizer = authorizers.HttpIamAuthorizer()
        base = c.PARTICIPANTS_PATH
        flows = c.FLOWS_PATH
        for path in (
            base,
            f"{base}/{{id}}",
            f"{base}/{{id}}/history",
            f"{base}/{{id}}/state",
            f"{base}/{{id}}/reconcile",  # docs/architecture.md#effects
            c.RECONCILE_PATH,
            c.PARTICIPANT_ROWS_PATH,  # the console's list, a page of rows in one call (docs/console.md)
            f"{flows}/{{id}}",  # flow definitions (docs/controller.md); /validate is {id} = "validate"
            f"{flows}/{{id}}/versions",
            f"{c.STUDIES_PATH}/{{id}}/decisions",  # a study's decision records, paged (docs/studies.md)
            f"{base}/{{id}}/staff-messages",  # a message from the study team (docs/console.md)
            c.AUDIT_PATH,  # the coordinators' audit records (docs/console.md, "Accountability")
            c.ENROLMENT_CHECKS_PATH,  # a cohort checked before it is enrolled (docs/console.md)
        ):
            # ANY: the handler answers every method, 405 with Allow for the wrong ones (contract).
            self.http_api.add_routes(
                path=path,
                methods=[apigw.HttpMethod.ANY],
                integration=integration,
                authorizer=authorizer,
            )

    def _add_webhook_routes(self, webhook: lambda_.IFunction, config: c.Config) -> None:
        integration = integrations.HttpLambdaIntegration("Webhook", webhook)
        public = apigw.HttpNoneAuthorizer()
        routes = self.http_api.add_routes(
            path=c.TWILIO_WEBHOOK_PATH,
            methods=[apigw.HttpMethod.POST],
            integration=integration,
            authorizer=public,
        ) + self.http_api.add_routes(
            path=c.WHATSAPP_WEBHOOK_PATH,
            methods=[apigw.HttpMethod.GET, apigw.HttpMethod.POST],  # GET: Meta's verification
            integration=integration,
            authorizer=public,
        )
        self._throttle_apart(routes, config)
        for route in routes:
            acknowledge(
                route,
                (
                    "AwsSolutions-APIG4",
                    "Called by Twilio and Meta, which cannot sign with IAM or obtain tokens; the "
                    "function verifies X-Twilio-Signature / X-Hub-Signature-256 (or the verify "
                    "token) before doing anything, and the stage is throttled.",
                ),
            )

    def _throttle_apart(self, routes: list[apigw.HttpRoute], config: c.Config) -> None:
        """Each webhook route its own throttle, apart from the stage default the participants API
        uses (docs/safety.md#limits-at-the-edge). The L2 stage takes only the default, so the
        route settings go on the CloudFormation stage, which must be created after the routes."""
        stage = self.stage.node.default_child
        assert isinstance(stage, apigw.CfnStage)
        settings: dict[str, dict[str, int]] = {}
        for route in routes:
            cfn_route = route.node.default_child
            assert isinstance(cfn_route, apigw.CfnRoute)
            # A JSON property: CloudFormation's own key names.
            settings[cfn_route.route_key] = {
                "ThrottlingRateLimit": config.webhook_rate_limit,
                "ThrottlingBurstLimit": config.webhook_burst_limit,
            }
            self.stage.node.add_dependency(route)
        stage.route_settings = settings


@jsii.implements(apigw.IAccessLogSettings)
class _AccessLogSettings:
    """``IAccessLogSettings`` is an interface in jsii: a plain object must implement it."""

    def __init__(self, destination: apigw.IAccessLogDestination, fmt: apigw_v1.AccessLogFormat) -> None:
        self._destination = destination
        self._format = fmt

    @property
    def destination(self) -> apigw.IAccessLogDestination:
        return self._destination

    @property
    def format(self) -> apigw_v1.AccessLogFormat:
        return self._format
