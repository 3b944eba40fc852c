# Runs an upstream example's Python hook program unchanged on the host, as its container would
# run it: the program's file is loaded as a module and only its environment is adapted.
#   argv[1]  the program (as mounted from the example's ConfigMap)
#   argv[2]  JSON {mountPath: local dir} for the Deployment's volume mounts
#   argv[3]  the local port standing in for the container port
# Module-level paths under a mount path point into the local copy of that volume; the server
# binds loopback on the given port instead of every interface of a Pod's own network namespace.
import http.server
import importlib.util
import json
import pathlib
import sys

program, mounts, port = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])


class LoopbackServer(http.server.HTTPServer):
    def __init__(self, address, handler):
        super().__init__(("127.0.0.1", port), handler)


# A program that starts its server at module level (indexedjob's sync.py) imports this one.
http.server.HTTPServer = LoopbackServer
spec = importlib.util.spec_from_file_location("hook_program", program)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
for name, value in list(vars(module).items()):
    if isinstance(value, pathlib.PurePath):
        for mount, local in mounts.items():
            text = str(value)
            if text == mount or text.startswith(mount + "/"):
                setattr(module, name, pathlib.Path(local + text[len(mount):]))
module.PORT = port
module.HTTPServer = LoopbackServer
module.main()
