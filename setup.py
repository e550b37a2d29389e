"""Packaging for privcausal: everything is read from settings.ini (nbdev 2 layout).

Deliberately free of `pkg_resources` (absent from current setuptools in pip's isolated build).
"""
from configparser import ConfigParser
from pathlib import Path

import setuptools

config = ConfigParser(delimiters=['='])
config.read(Path(__file__).parent / 'settings.ini', encoding='utf-8')
cfg = config['DEFAULT']

licenses = {'apache2': ('Apache Software License 2.0', 'OSI Approved :: Apache Software License')}
statuses = ['1 - Planning', '2 - Pre-Alpha', '3 - Alpha', '4 - Beta', '5 - Production/Stable', '6 - Mature', '7 - Inactive']
lic = licenses[cfg['license']]
requirements = cfg.get('requirements', '').split()
dev_requirements = cfg.get('dev_requirements', '').split()
dask_requirements = cfg.get('dask_requirements', '').split()
console_scripts = cfg.get('console_scripts', '').split()
min_python = cfg['min_python']

setuptools.setup(
    name=cfg['lib_name'],
    version=cfg['version'],
    description=cfg['description'],
    long_description=(Path(__file__).parent / 'README.md').read_text(encoding='utf-8'),
    long_description_content_type='text/markdown',
    author=cfg['author'],
    author_email=cfg['author_email'],
    license=lic[0],
    keywords=cfg['keywords'].split(),
    classifiers=[
        'Development Status :: ' + statuses[int(cfg['status'])],
        'Intended Audience :: ' + cfg['audience'],
        'License :: ' + lic[1],
        'Natural Language :: ' + cfg['language'],
        'Programming Language :: Python :: 3',
        'Topic :: Scientific/Engineering :: Mathematics',
    ],
    url=cfg['git_url'],
    packages=setuptools.find_packages(include=[cfg['lib_path'], cfg['lib_path'] + '.*']),
    include_package_data=True,
    install_requires=requirements,
    extras_require={'dev': dev_requirements, 'dask': dask_requirements},
    python_requires='>=' + min_python,
    zip_safe=False,
    entry_points={
        'console_scripts': console_scripts,
        'nbdev': [f"{cfg['lib_path']}={cfg['lib_path']}._modidx:d"],
    },
)
