pytest_plugins = ["tests.lab.fixtures", "tests.real_libs.fixtures", "tests.fix_guard"]
