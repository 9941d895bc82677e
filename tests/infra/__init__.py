"""CDK stack tests."""
