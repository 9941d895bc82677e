"""PromptPipe Serverless: the conversation flow engine shared by every Lambda function.

Layering: ``functions/*`` (thin handlers) -> ``promptpipe.flow`` and friends (behaviour) ->
``promptpipe.adapters`` (the only code that touches boto3, OpenAI, Twilio or HTTP).
"""

__version__ = "0.1.0"
