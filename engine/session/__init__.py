"""The scheduling session after Volcano's framework: policy, framework, statement, actions, plugins, recycle."""
