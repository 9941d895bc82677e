"""CDK app of PromptPipe Serverless: one stack composed of one construct per concern."""
