"""Serverless migration of a video library to a provider's create-from-URL API.

The package is deployed as the code of every Lambda in template.yaml and also
installs the operator tooling. Pure decisions live in `messages`, `retry` and
`fate`; DynamoDB, SQS and HTTP live in `ledger`, `pacer` and `provider`;
handlers (`uploader`) only wire them together.
"""
