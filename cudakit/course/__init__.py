"""Running the course for a class: nbgrader course folders, nbgrader steps, GPUs for a hub.

``build`` writes an nbgrader course from ``solutions/`` (``cudakit course``);
``preprocessors`` plugs cudakit's skeletons and grader into nbgrader's steps;
``gpus`` shares a machine's GPUs or MIG instances among JupyterHub servers
(``deploy/jupyterhub_config.py``). See deploy/README.md and deploy/INSTRUCTORS.md.
"""
